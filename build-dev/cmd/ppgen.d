build-dev/cmd/ppgen.o: cmd/ppgen.c pipeline/cli.h pipeline/config.h \
 pipeline/gen.h pipeline/pp.h
pipeline/cli.h:
pipeline/config.h:
pipeline/gen.h:
pipeline/pp.h:
