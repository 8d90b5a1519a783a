build-dev/pipeline/safefile.o: pipeline/safefile.c pipeline/safefile.h \
 pipeline/pp.h
pipeline/safefile.h:
pipeline/pp.h:
