build-dev/cmd/ppbatch.o: cmd/ppbatch.c pipeline/batch.h pipeline/cli.h \
 pipeline/config.h pipeline/pp.h
pipeline/batch.h:
pipeline/cli.h:
pipeline/config.h:
pipeline/pp.h:
