build-dev/pipeline/interval.o: pipeline/interval.c pipeline/interval.h
pipeline/interval.h:
