//! docs/abi.md and include/strata.h, generated from the op table and the structures (filled in next).
