build-dev/pipeline/gen.o: pipeline/gen.c pipeline/gen.h \
 pipeline/gen_layout.h pipeline/gen_model.h pipeline/gen_truth.h \
 pipeline/gen_write.h pipeline/pp.h
pipeline/gen.h:
pipeline/gen_layout.h:
pipeline/gen_model.h:
pipeline/gen_truth.h:
pipeline/gen_write.h:
pipeline/pp.h:
