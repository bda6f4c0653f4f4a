/* lancever/lancever.h - umbrella header for the lancever library. */
#ifndef LANCEVER_H
#define LANCEVER_H
#include "common.h"
#include "storage.h"
#include "refs.h"
#include "dataset.h"
#include "lancefile.h"
#include "checkpoint.h"
#include "cleanup.h"
#include "check.h"
#include "arrow.h"
#include "show.h"
#include "diff.h"
#include "capture.h"
#include "watch.h"
#endif
