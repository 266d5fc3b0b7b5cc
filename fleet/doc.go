// Package fleet links the Groups of the replicas of one service through
// Redis, so that the fleet sheds a hung supplier as soon as one replica
// sees it, and sends it one probe per reset period instead of one per
// replica.
package fleet
