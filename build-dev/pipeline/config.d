build-dev/pipeline/config.o: pipeline/config.c pipeline/config.h \
 pipeline/pp.h
pipeline/config.h:
pipeline/pp.h:
