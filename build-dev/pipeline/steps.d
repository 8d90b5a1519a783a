build-dev/pipeline/steps.o: pipeline/steps.c pipeline/arena.h \
 pipeline/classify_priv.h pipeline/htab.h pipeline/patterns.h \
 pipeline/rank_result.h pipeline/pp.h
pipeline/arena.h:
pipeline/classify_priv.h:
pipeline/htab.h:
pipeline/patterns.h:
pipeline/rank_result.h:
pipeline/pp.h:
