build-dev/pipeline/attribute.o: pipeline/attribute.c \
 pipeline/classify_priv.h pipeline/htab.h pipeline/patterns.h \
 pipeline/rank_result.h
pipeline/classify_priv.h:
pipeline/htab.h:
pipeline/patterns.h:
pipeline/rank_result.h:
