build-dev/pipeline/agg_ideal.o: pipeline/agg_ideal.c pipeline/agg.h \
 pipeline/pp.h pipeline/sim.h
pipeline/agg.h:
pipeline/pp.h:
pipeline/sim.h:
