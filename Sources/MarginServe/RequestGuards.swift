import Foundation
import Hummingbird
import MarginCore
import MarginKit
import NIOCore
import Synchronization

/// The names a server answers to. A local server is reachable from every web page its user
/// opens: a page whose name is made to resolve to 127.0.0.1 (DNS rebinding) sends its own name
/// as `Host`, so only the names the server is really reached by are served; any other gets 421.
public final class ServedNames: Sendable {
    /// Bare host names, lowercased (IPv6 in brackets).
    let names: Set<String>
    /// Exact `name:port` pairs (an `--allow-host NAME:PORT`).
    let authorities: Set<String>
    /// The port bound: a `Host` without a port means 80. Nil until bound (a router served in
    /// process), when a `Host` without a port is taken as it comes.
    private let boundPort = Mutex<Int?>(nil)

    /// The loopback names, `host` as given (and, for a wildcard address, this machine's own
    /// addresses and name), and each of `allowed`.
    public init(host: String, allowed: [String] = []) {
        var names: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
        names.insert(Self.bracketed(host))
        if host == "0.0.0.0" || host == "::" {
            names.formUnion(localAddresses().map(Self.bracketed))
            var buffer = [CChar](repeating: 0, count: 256)
            if gethostname(&buffer, buffer.count) == 0 {
                names.insert(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        var authorities = Set<String>()
        for name in allowed.map({ $0.lowercased() }) {
            if case let (bare, port?)? = Self.split(name) {
                authorities.insert(bare + ":" + String(port))
            } else {
                names.insert(Self.bracketed(name))
            }
        }
        self.names = Set(names.map { $0.lowercased() })
        self.authorities = authorities
    }

    public func bound(to port: Int) { boundPort.withLock { $0 = port } }

    /// Whether a request's `Host` (its authority) names this server.
    func accepts(_ authority: String?) -> Bool {
        guard let authority, case let (name, port)? = Self.split(authority.lowercased()) else { return false }
        let bound = boundPort.withLock { $0 }
        if let port, authorities.contains(name + ":" + String(port)) { return true }
        guard names.contains(name) else { return false }
        switch (port, bound) {
        case (nil, nil): return true
        case (nil, let bound?): return bound == 80
        case (let port?, nil): return port > 0
        case (let port?, let bound?): return port == bound
        }
    }

    /// `name` and its port, IPv6 literals kept in brackets; nil when malformed.
    static func split(_ authority: String) -> (String, Int?)? {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let name = String(authority[...close])
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty { return (name, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (name, port)
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 1 { return parts[0].isEmpty ? nil : (String(parts[0]), nil) }
        if parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port) {
            return (String(parts[0]), port)
        }
        // A bare IPv6 address (as --host or --allow-host give it).
        return parts.count > 2 ? ("[" + authority + "]", nil) : nil
    }

    static func bracketed(_ host: String) -> String {
        let lower = host.lowercased()
        return lower.contains(":") && !lower.hasPrefix("[") ? "[" + lower + "]" : lower
    }
}

/// This machine's interface addresses, as text.
private func localAddresses() -> [String] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return [] }
    defer { freeifaddrs(list) }
    var found = [String]()
    var cursor: UnsafeMutablePointer<ifaddrs>? = first
    while let entry = cursor {
        if let address = entry.pointee.ifa_addr, let text = numericHost(address) { found.append(text) }
        cursor = entry.pointee.ifa_next
    }
    return found
}

private func numericHost(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
    let family = Int32(address.pointee.sa_family)
    guard family == AF_INET || family == AF_INET6 else { return nil }
    let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
        return nil
    }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.split(separator: "%").first.map(String.init)  // no zone index
}

/// Every response carries the headers of defence: scripts and styles only from the server (no
/// inline script or style), no framing, no sniffing, no referrer.
struct DefenceHeadersMiddleware: RouterMiddleware {
    typealias Context = ReaderContext
    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[FieldName("Referrer-Policy")!] = "no-referrer"
        response.headers[FieldName("X-Frame-Options")!] = "DENY"
        return response
    }
}

/// Requests for a name this server is not reached by get 421; OPTIONS grants no other origin
/// anything.
struct HostGuardMiddleware: RouterMiddleware {
    typealias Context = ReaderContext
    let names: ServedNames

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let host = request.host
        guard names.accepts(host) else {
            throw HTTPError(
                .misdirectedRequest,
                message: "this server does not answer to '\(host ?? "")' (margin serve --allow-host NAME adds a name)")
        }
        if request.method == .options {
            var headers = HTTPFields()
            headers[.allow] = "GET, HEAD, POST, PATCH, DELETE, OPTIONS"
            return Response(status: .noContent, headers: headers)
        }
        return try await next(request, context)
    }
}

extension Request {
    /// The query string decoded as browsers encode it: an HTML form (GET) sends
    /// `application/x-www-form-urlencoded`, where `+` is a space (a literal plus comes as %2B).
    var query: Parameters {
        guard let raw = uri.query, raw.contains("+") else { return uri.queryParameters }
        return type(of: uri).init(uri.path + "?" + raw.replacingOccurrences(of: "+", with: "%20")).queryParameters
    }

    /// The name and port the request was sent to: HTTP/1's `Host` (which HTTPTypes keeps as the
    /// authority), or the header itself where a client put it among the fields.
    var host: String? { headers[FieldName("Host")!] ?? head.authority }
}

/// Writes must be JSON from the server's own pages (403 otherwise).
struct WriteGuardMiddleware: RouterMiddleware {
    typealias Context = ReaderContext
    static let writes: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if Self.writes.contains(request.method) { try Self.checkWrite(request) }
        return try await next(request, context)
    }

    /// A write comes from this server's own origin and says its body is JSON: a cross-site
    /// `<form>` can only send form encodings or text/plain, and a cross-site `fetch` with JSON
    /// needs a preflight this server never grants.
    static func checkWrite(_ request: Request) throws {
        let type = request.headers[.contentType]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            throw HTTPError(.forbidden, message: "writes take a JSON body: send Content-Type: application/json")
        }
        let authority = (request.host ?? "").lowercased()
        if let origin = request.headers[.origin]?.lowercased() {
            guard origin == "http://" + authority || origin == "https://" + authority else {
                throw HTTPError(.forbidden, message: "a write from another site (Origin: \(origin)) is refused")
            }
        } else if let site = request.headers[FieldName("Sec-Fetch-Site")!]?.lowercased() {
            guard site == "same-origin" else {
                throw HTTPError(.forbidden, message: "a write from another site (Sec-Fetch-Site: \(site)) is refused")
            }
        }
    }
}

/// A header name (HTTPTypes' `HTTPField.Name`, reached through what Hummingbird exports).
typealias FieldName = HTTPFields.Element.Name

/// Every request but a page's image is under way, for the pages still drawing after a second,
/// which wait while it is (`IsolatedRender.answering`).
struct AnsweringMiddleware: RouterMiddleware {
    typealias Context = ReaderContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if path.hasPrefix("/api/books/"), path.hasSuffix(".png") || path.hasSuffix(".svg") {
            return try await next(request, context)
        }
        IsolatedRender.answering(true)
        defer { IsolatedRender.answering(false) }
        return try await next(request, context)
    }
}
