build-dev/pipeline/pp.o: pipeline/pp.c pipeline/pp.h
pipeline/pp.h:
