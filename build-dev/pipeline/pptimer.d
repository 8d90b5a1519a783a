build-dev/pipeline/pptimer.o: pipeline/pptimer.c pipeline/pptimer.h \
 pipeline/batch.h storage/db.h storage/schema.h pipeline/interval.h \
 pipeline/json_scan.h pipeline/pp.h pipeline/strbuf.h pipeline/walk.h
pipeline/pptimer.h:
pipeline/batch.h:
storage/db.h:
storage/schema.h:
pipeline/interval.h:
pipeline/json_scan.h:
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/walk.h:
