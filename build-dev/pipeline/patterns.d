build-dev/pipeline/patterns.o: pipeline/patterns.c pipeline/config.h \
 pipeline/patterns.h pipeline/pp.h
pipeline/config.h:
pipeline/patterns.h:
pipeline/pp.h:
