build-dev/pipeline/gen_prog.o: pipeline/gen_prog.c pipeline/gen_priv.h \
 pipeline/gen_model.h pipeline/gen_layout.h pipeline/gen_sched.h \
 pipeline/pp.h
pipeline/gen_priv.h:
pipeline/gen_model.h:
pipeline/gen_layout.h:
pipeline/gen_sched.h:
pipeline/pp.h:
