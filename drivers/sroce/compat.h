/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few interfaces that differ between the kernels sroce builds for
 * (Debian 6.1 and newer). Keep it small: one shim per difference.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>

/* <kunit/visibility.h> arrived in 6.2. */
#if __has_include(<kunit/visibility.h>)
#include <kunit/visibility.h>
#elif IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_KUNIT(sym) EXPORT_SYMBOL_NS(sym, EXPORTED_FOR_KUNIT_TESTING)
#else
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#endif

/* Symbol namespaces became string literals in 6.13. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

#endif /* SROCE_COMPAT_H */
