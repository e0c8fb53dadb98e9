// Package monitors is the read model of the records service's list
// monitors: which account watches which of its lists, with which webhook
// URL and layers. The signing secrets stay sealed with the accounts' data
// keys; the read model does not hold them.
package monitors
