package store

const SysRenameat2 = 316
