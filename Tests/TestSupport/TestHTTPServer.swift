import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

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

    /// A file from disk, served as `application/pdf` unless said otherwise.
    public static func file(_ path: String, contentType: String = "application/pdf") -> Route {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        return .bytes(Array(data), contentType: contentType)
    }
}

/// A real HTTP/1.1 server on 127.0.0.1 and a free port, for tests. Nothing leaves the machine.
public final class TestHTTPServer: Sendable {
    private let channel: any Channel
    private let state: NIOLockedValueBox<[String: Route]>
    private let hits: NIOLockedValueBox<[String: Int]>
    public let port: Int

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func url(_ path: String) -> String { baseURL + path }

    /// How many requests reached `path`.
    public func hitCount(_ path: String) -> Int { hits.withLockedValue { $0[path] ?? 0 } }

    public func setRoute(_ path: String, _ route: Route) {
        state.withLockedValue { $0[path] = route }
    }

    public init(routes: [String: Route]) throws {
        let state = NIOLockedValueBox(routes)
        let hits = NIOLockedValueBox([String: Int]())
        self.state = state
        self.hits = hits
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(RouteHandler(routes: state, hits: hits))
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
    let hits: NIOLockedValueBox<[String: Int]>
    var path = "/"

    init(routes: NIOLockedValueBox<[String: Route]>, hits: NIOLockedValueBox<[String: Int]>) {
        self.routes = routes
        self.hits = hits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "/")
        case .body:
            break
        case .end:
            let path = self.path
            hits.withLockedValue { $0[path, default: 0] += 1 }
            respond(context: context, route: routes.withLockedValue { $0[path] } ?? .status(404))
        }
    }

    private func respond(context: ChannelHandlerContext, route: Route) {
        var headers = HTTPHeaders()
        var status = HTTPResponseStatus.ok
        var body = [UInt8]()
        var cutAfter: Int?
        switch route {
        case .bytes(let bytes, let contentType):
            headers.add(name: "Content-Type", value: contentType)
            body = bytes
        case .status(let code):
            status = HTTPResponseStatus(statusCode: code)
            headers.add(name: "Content-Type", value: "text/plain")
            body = Array("status \(code)\n".utf8)
        case .redirect(let target):
            status = .found
            headers.add(name: "Location", value: target)
        case .cut(let bytes, let sent):
            headers.add(name: "Content-Type", value: "application/pdf")
            body = bytes
            cutAfter = sent
        }
        headers.add(name: "Content-Length", value: String(body.count))
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        let sent = cutAfter.map { Array(body.prefix($0)) } ?? body
        if !sent.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: sent)))), promise: nil)
        }
        if cutAfter != nil {
            context.flush()
            context.close(promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
