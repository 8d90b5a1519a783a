build-dev/pipeline/arena.o: pipeline/arena.c pipeline/arena.h
pipeline/arena.h:
