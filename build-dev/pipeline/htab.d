build-dev/pipeline/htab.o: pipeline/htab.c pipeline/htab.h pipeline/pp.h
pipeline/htab.h:
pipeline/pp.h:
