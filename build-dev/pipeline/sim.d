build-dev/pipeline/sim.o: pipeline/sim.c pipeline/sim.h pipeline/pp.h \
 pipeline/sim_int.h pipeline/strbuf.h
pipeline/sim.h:
pipeline/pp.h:
pipeline/sim_int.h:
pipeline/strbuf.h:
