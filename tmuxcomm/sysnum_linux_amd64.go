package tmuxcomm

const sysRenameat2 = 316
