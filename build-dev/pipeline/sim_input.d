build-dev/pipeline/sim_input.o: pipeline/sim_input.c pipeline/sim_input.h \
 pipeline/sim.h pipeline/config.h pipeline/pp.h pipeline/strbuf.h
pipeline/sim_input.h:
pipeline/sim.h:
pipeline/config.h:
pipeline/pp.h:
pipeline/strbuf.h:
