package store

const sysRenameat2 = 276
