import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A request as the test server saw it.
public struct SeenRequest: Sendable {
    public var path: String
    public var headers: [String: String]
    /// The whole request target, query included.
    public var uri = ""

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What the test server sends back.
public struct Reply: Sendable {
    public var status: Int = 200
    public var headers: [(String, String)] = []
    public var body: [UInt8] = []
    /// Send only this many body bytes, then close the connection (a cut mid-body).
    public var cutAfter: Int?
    /// Send the body in pieces of this size with this delay between them (a slow drip).
    public var drip: (bytes: Int, delay: Double)?

    public init(
        status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = [], cutAfter: Int? = nil,
        drip: (bytes: Int, delay: Double)? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.cutAfter = cutAfter
        self.drip = drip
    }
}

/// What the test server answers on one path.
public enum Route: Sendable {
    /// 200 with these bytes and Content-Type.
    case bytes([UInt8], contentType: String)
    /// A bare status with a short text body.
    case status(Int)
    /// A 302 to another path or URL.
    case redirect(String)
    /// Declares `Content-Length` of the whole body, sends only the first `sent` bytes, then closes.
    case cut([UInt8], sent: Int)
    /// Any reply, decided per request.
    case handler(@Sendable (SeenRequest) -> Reply)

    /// A file from disk, served as `application/pdf` unless said otherwise.
    public static func file(_ path: String, contentType: String = "application/pdf") -> Route {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        return .bytes(Array(data), contentType: contentType)
    }

    /// A file served like a careful static server: ETag and Last-Modified, 304 for matching
    /// conditional requests, 206 for Range requests (honouring If-Range) unless `ranges` is false.
    public static func validated(
        _ bytes: [UInt8], etag: String, lastModified: String = "Wed, 21 Oct 2026 07:28:00 GMT", ranges: Bool = true,
        cutAfter: Int? = nil
    ) -> Route {
        .handler { request in
            serveValidated(
                bytes, etag: etag, lastModified: lastModified, ranges: ranges, cutAfter: cutAfter, request: request)
        }
    }
}

/// The reply of a careful static server for `bytes` (see `Route.validated`).
public func serveValidated(
    _ bytes: [UInt8], etag: String, lastModified: String, ranges: Bool, cutAfter: Int?, request: SeenRequest
) -> Reply {
    let validators = [("ETag", etag), ("Last-Modified", lastModified), ("Content-Type", "application/pdf")]
    if let match = request.header("if-none-match"), match == etag {
        return Reply(status: 304, headers: validators)
    }
    if request.header("if-none-match") == nil, let since = request.header("if-modified-since"), since == lastModified {
        return Reply(status: 304, headers: validators)
    }
    if ranges, let range = request.header("range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
        let start = Int(range.dropFirst(6).dropLast())
    {
        let ifRange = request.header("if-range")
        if ifRange == nil || ifRange == etag || ifRange == lastModified {
            guard start < bytes.count else {
                return Reply(status: 416, headers: [("Content-Range", "bytes */\(bytes.count)")])
            }
            return Reply(
                status: 206,
                headers: validators + [
                    ("Content-Range", "bytes \(start)-\(bytes.count - 1)/\(bytes.count)"), ("Accept-Ranges", "bytes"),
                ],
                body: Array(bytes[start...]))
        }
    }
    return Reply(
        status: 200, headers: validators + [("Accept-Ranges", ranges ? "bytes" : "none")], body: bytes,
        cutAfter: cutAfter)
}

/// A real HTTP/1.1 server on 127.0.0.1 and a free port, for tests. Nothing leaves the machine.
public final class TestHTTPServer: Sendable {
    private let channel: any Channel
    private let state: NIOLockedValueBox<[String: Route]>
    private let log: NIOLockedValueBox<[SeenRequest]>
    public let port: Int

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func url(_ path: String) -> String { baseURL + path }

    /// How many requests reached `path`.
    public func hitCount(_ path: String) -> Int { log.withLockedValue { $0.filter { $0.path == path }.count } }

    /// Every request, oldest first.
    public var allRequests: [SeenRequest] { log.withLockedValue { $0 } }

    /// Every request to `path`, oldest first.
    public func requests(_ path: String) -> [SeenRequest] { log.withLockedValue { $0.filter { $0.path == path } } }

    public func setRoute(_ path: String, _ route: Route) {
        state.withLockedValue { $0[path] = route }
    }

    public init(routes: [String: Route]) throws {
        let state = NIOLockedValueBox(routes)
        let log = NIOLockedValueBox([SeenRequest]())
        self.state = state
        self.log = log
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(RouteHandler(routes: state, log: log))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress?.port ?? 0
    }

    public func shutdown() {
        try? channel.close().wait()
    }

    deinit {
        channel.close(promise: nil)
    }
}

private final class RouteHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let routes: NIOLockedValueBox<[String: Route]>
    let log: NIOLockedValueBox<[SeenRequest]>
    var request = SeenRequest(path: "/", headers: [:])

    init(routes: NIOLockedValueBox<[String: Route]>, log: NIOLockedValueBox<[SeenRequest]>) {
        self.routes = routes
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            var headers = [String: String]()
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            request = SeenRequest(
                path: String(head.uri.split(separator: "?", maxSplits: 1).first ?? "/"), headers: headers, uri: head.uri
            )
        case .body:
            break
        case .end:
            let request = self.request
            log.withLockedValue { $0.append(request) }
            let route = routes.withLockedValue { $0[request.path] } ?? .status(404)
            respond(context: context, reply: reply(for: route, request))
        }
    }

    private func reply(for route: Route, _ request: SeenRequest) -> Reply {
        switch route {
        case .bytes(let bytes, let contentType):
            return Reply(headers: [("Content-Type", contentType)], body: bytes)
        case .status(let code):
            return Reply(status: code, headers: [("Content-Type", "text/plain")], body: Array("status \(code)\n".utf8))
        case .redirect(let target):
            return Reply(status: 302, headers: [("Location", target)])
        case .cut(let bytes, let sent):
            return Reply(headers: [("Content-Type", "application/pdf")], body: bytes, cutAfter: sent)
        case .handler(let handler):
            return handler(request)
        }
    }

    private func respond(context: ChannelHandlerContext, reply: Reply) {
        var headers = HTTPHeaders()
        for (name, value) in reply.headers { headers.add(name: name, value: value) }
        if reply.status != 304 { headers.replaceOrAdd(name: "Content-Length", value: String(reply.body.count)) }
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: reply.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let sent = reply.cutAfter.map { Array(reply.body.prefix($0)) } ?? (reply.status == 304 ? [] : reply.body)
        if let drip = reply.drip, !sent.isEmpty {
            dripBody(
                context: context, bytes: sent[...], piece: max(1, drip.bytes), delay: drip.delay,
                close: reply.cutAfter != nil)
            return
        }
        if !sent.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: sent)))), promise: nil)
        }
        finish(context: context, close: reply.cutAfter != nil)
    }

    private func dripBody(
        context: ChannelHandlerContext, bytes: ArraySlice<UInt8>, piece: Int, delay: Double, close: Bool
    ) {
        let chunk = bytes.prefix(piece)
        let rest = bytes.dropFirst(piece)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: chunk)))), promise: nil)
        if rest.isEmpty {
            finish(context: context, close: close)
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
            let (handler, context) = loopBound.value
            guard context.channel.isActive else { return }
            handler.dripBody(context: context, bytes: rest, piece: piece, delay: delay, close: close)
        }
    }

    private func finish(context: ChannelHandlerContext, close: Bool) {
        if close {
            context.flush()
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
