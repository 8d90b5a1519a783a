build-dev/pipeline/gen_sched.o: pipeline/gen_sched.c pipeline/gen_sched.h \
 pipeline/pp.h
pipeline/gen_sched.h:
pipeline/pp.h:
