/* Moved to base/error.h (the bottom unit).  This forwarder remains only for coll/, whose
 * includes change when its rework lands; new code includes "base/error.h". */
#include "base/error.h"
