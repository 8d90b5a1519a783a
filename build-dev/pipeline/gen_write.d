build-dev/pipeline/gen_write.o: pipeline/gen_write.c pipeline/gen_write.h \
 pipeline/gen_model.h pipeline/gen_layout.h pipeline/pp.h
pipeline/gen_write.h:
pipeline/gen_model.h:
pipeline/gen_layout.h:
pipeline/pp.h:
