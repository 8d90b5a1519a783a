build-dev/pipeline/gen_sim.o: pipeline/gen_sim.c pipeline/gen_priv.h \
 pipeline/gen_model.h pipeline/gen_layout.h pipeline/pp.h
pipeline/gen_priv.h:
pipeline/gen_model.h:
pipeline/gen_layout.h:
pipeline/pp.h:
