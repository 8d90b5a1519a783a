build-dev/pipeline/cli.o: pipeline/cli.c pipeline/cli.h pipeline/pp.h
pipeline/cli.h:
pipeline/pp.h:
