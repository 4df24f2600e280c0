/* bench/analysis/testdata/small.c — a small C file for
 * test/t/19_analysis_extract.sh: every construct extract.py maps
 * (address-of, copies, loads, stores, a struct field via GEP, a phi from a
 * conditional, a call passing and returning a pointer, a NULL assignment,
 * a global initialised with an address, a cast, a string constant,
 * NULL passed as an argument).  The edges each line produces
 * are listed in expected/EDGES.md. */
#include <stddef.h>

struct pair { int n; int *f; };

int g;
int *gp = &g;

int *pass(int *a) {
  return a;
}

int main(int c) {
  int x;
  int *p = &x;
  int *q = p;
  struct pair s;
  s.f = q;
  int **pp = &p;
  *pp = &g;
  int *r = c ? p : gp;
  int *t = pass(r);
  int *n = NULL;
  char *b = (char *)p;
  const char *msg = "hi";
  pass(NULL);
  return *t + *s.f + (n != 0) + *b + *msg;
}
