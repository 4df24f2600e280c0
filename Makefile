# gpudl — PGXS build.
#
#   make && make install          the extension (and cuda/gpudl_cuda.so when nvcc exists)
#   make installcheck             pg_regress + pgTAP suites against a running server
#   make unit                     standalone core tests (no database)
#   make check-all                everything, as CI runs it (test/run_all.sh)
#   make deb                      the Debian package, in build/deb/ (tools/deb.sh)
EXTENSION    = gpudl
EXTVERSION   = 0.7
MODULE_big   = gpudl

# every layer's C sources: src/core, src/lang, src/plan, src/exec, src/cpu,
# src/ilp (the plain-C core) and src/pg (the PostgreSQL layer)
SRCS         = $(sort $(wildcard src/*/*.c))
OBJS         = $(SRCS:.c=.o)
# every install and update script: CREATE EXTENSION runs gpudl--0.1.sql, then
# the update scripts up to default_version (there is no gpudl--0.2.sql)
DATA         = $(sort $(wildcard sql/gpudl--*.sql))

# pg_regress suites: every sql/*.sql except the install scripts, in name order
REGRESS      = $(sort $(notdir $(basename $(filter-out sql/gpudl--%,$(wildcard sql/*.sql)))))
REGRESS_OPTS = --inputdir=. --outputdir=test/out --load-extension=gpudl --load-extension=pgtap

PG_CPPFLAGS  = -Isrc -std=gnu11
PG_CFLAGS    = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare \
               -Wno-missing-field-initializers -Wno-cast-function-type \
               -Wno-declaration-after-statement
SHLIB_LINK   = -ldl -lpthread -lm

# bitcode for JIT inlining is optional and needs clang; keep the build portable
override with_llvm = no
# rebuild objects when a header they include changes (-MMD)
override autodepend = yes

PG_CONFIG   ?= pg_config
PGXS        := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# ------------------------------------------------------------- CUDA module
# gpudl_cuda.so is the GPU backend, dlopen'ed by a backend on first use.  It is
# built only where nvcc exists; the extension works without it.
NVCC        ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_SRCS    = $(sort $(wildcard cuda/*.cu))
CUDA_ARCH   ?= -gencode arch=compute_90,code=sm_90
NVCC_FLAGS   = -O3 -std=c++17 $(CUDA_ARCH) -Xcompiler -fPIC,-Wall,-Werror -Werror all-warnings \
               -cudart static -Isrc --expt-relaxed-constexpr

ifneq ($(strip $(NVCC)),)
ifneq ($(strip $(CUDA_SRCS)),)
all: cuda/gpudl_cuda.so
install: install-cuda
endif
endif

cuda/gpudl_cuda.so: $(CUDA_SRCS) $(wildcard cuda/*.cuh) $(wildcard src/exec/gdl_backend.h src/ilp/gdl_ilp_device.h src/mine/gdl_mine_device.h)
	$(NVCC) $(NVCC_FLAGS) -shared -o $@ $(CUDA_SRCS)

install-cuda: cuda/gpudl_cuda.so
	$(INSTALL_SHLIB) cuda/gpudl_cuda.so '$(DESTDIR)$(pkglibdir)/gpudl_cuda.so'

# the Debian package postgresql-15-gpudl, in build/deb/ (debian/, pg_buildext)
.PHONY: deb
deb:
	bash tools/deb.sh

EXTRA_CLEAN  = cuda/gpudl_cuda.so test/out

# --------------------------------------------------------------- tests
unit:
	$(MAKE) -C test/unit check

check-all:
	bash test/run_all.sh

.PHONY: unit check-all install-cuda
