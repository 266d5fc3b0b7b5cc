package priority

// Header is the default HTTP header, and gRPC metadata key (lower-cased),
// that carries a call's priority from one service to the next: fusehttp
// and fusegrpc send it, and a server reads it only from peers it trusts.
const Header = "Fusebox-Priority"
