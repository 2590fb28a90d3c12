package tmuxcomm

const sysRenameat2 = 276
