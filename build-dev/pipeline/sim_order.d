build-dev/pipeline/sim_order.o: pipeline/sim_order.c pipeline/pp.h \
 pipeline/sim_int.h pipeline/sim.h
pipeline/pp.h:
pipeline/sim_int.h:
pipeline/sim.h:
