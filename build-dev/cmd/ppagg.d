build-dev/cmd/ppagg.o: cmd/ppagg.c pipeline/agg.h pipeline/cli.h \
 pipeline/config.h pipeline/pp.h
pipeline/agg.h:
pipeline/cli.h:
pipeline/config.h:
pipeline/pp.h:
