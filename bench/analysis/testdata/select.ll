; bench/analysis/testdata/select.ll — hand-written IR for what clang -O0
; does not emit from small.c: a select of two pointers and a bitcast of a
; global in a constant expression passed to a static (internal) function,
; whose nodes are qualified by the file: select.ll/keep:%o (test 19).
@h = global i32 0

define i32* @pick(i1 %c, i32* %u, i32* %v) {
entry:
  %w = select i1 %c, i32* %u, i32* null
  %k = select i1 %c, i32* %w, i32* %v
  %z = call i8* @keep(i8* bitcast (i32* @h to i8*))
  ret i32* %k
}

define internal i8* @keep(i8* %o) {
entry:
  ret i8* %o
}
