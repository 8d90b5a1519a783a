build-dev/pipeline/gen_truth.o: pipeline/gen_truth.c pipeline/gen_truth.h \
 pipeline/gen_model.h pipeline/gen_layout.h pipeline/interval.h \
 pipeline/pp.h
pipeline/gen_truth.h:
pipeline/gen_model.h:
pipeline/gen_layout.h:
pipeline/interval.h:
pipeline/pp.h:
