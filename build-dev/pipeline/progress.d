build-dev/pipeline/progress.o: pipeline/progress.c pipeline/pp.h \
 pipeline/progress.h
pipeline/pp.h:
pipeline/progress.h:
