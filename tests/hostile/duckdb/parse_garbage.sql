-- expect: ERROR run
SELEC 1 FROM;
