/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few interfaces that differ between the kernels sroce builds for
 * (Debian 6.1 and newer). Kbuild detects each difference in the target
 * tree and passes a SROCE_HAVE_* switch; keep one shim per difference.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

/* <kunit/visibility.h> arrived in 6.2. */
#ifdef SROCE_HAVE_KUNIT_VISIBILITY
#include <kunit/visibility.h>
#elif IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_KUNIT(sym) \
	EXPORT_SYMBOL_NS(sym, EXPORTED_FOR_KUNIT_TESTING)
#else
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#endif

/* Symbol namespaces became string literals in 6.13. */
#ifdef SROCE_HAVE_NS_STRING
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif /* SROCE_COMPAT_H */
