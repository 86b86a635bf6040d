/// How `margin serve` listens and whom it answers: what the CLI hands to the server.
public struct ServeSettings: Sendable {
    /// The address listened on (a name, an IPv4 or IPv6 address).
    public var host: String
    /// The port (0 for any free one).
    public var port: Int
    /// Required of every request when set.
    public var token: String?
    /// Names besides the loopback ones and `host` that requests may give as `Host`.
    public var allowedHosts: [String]

    public init(host: String = "127.0.0.1", port: Int = 8484, token: String? = nil, allowedHosts: [String] = []) {
        self.host = host
        self.port = port
        self.token = token
        self.allowedHosts = allowedHosts
    }
}
