import Foundation
import Hummingbird
import Logging
import MarginCore
import MarginKit
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `margin serve`: the library as a local web reader. The pages and the JSON API are two views
/// of the same store the CLI uses; the API answers in the CLI's `--json` shapes, errors as
/// `{"error": "…"}`. A GET never writes, downloads or reindexes.
public struct ReaderServer: Sendable {
    public let library: Library
    /// Required of every request when set (header `Authorization: Bearer …` or the cookie that
    /// `/login?token=…` sets).
    public let token: String?
    /// The names requests may give as `Host` (others get 421).
    public let names: ServedNames
    /// How long a connection may take to send a request's headers, and stay idle between
    /// requests, before it is closed.
    public static let idleTimeout: TimeAmount = .seconds(10)

    /// Where `run` listens.
    public let settings: ServeSettings
    /// Pages that went over the render limits.
    let failures = RenderFailures()
    /// Seconds one search may take in the server.
    public static let searchTimeLimit = 5.0

    public init(library: Library, settings: ServeSettings) {
        self.library = library
        self.settings = settings
        self.token = settings.token.flatMap { $0.isEmpty ? nil : $0 }
        self.names = ServedNames(host: settings.host, allowed: settings.allowedHosts)
    }

    /// A server for `library` on loopback (a router served in process, in tests).
    public init(library: Library, token: String?) {
        self.init(library: library, settings: ServeSettings(token: token))
    }

    /// Every route of the reader and the API, HEAD answered wherever GET is.
    public func router() -> ReaderRouter { ReaderRouter(router: routes()) }

    /// Every route of the reader and the API.
    func routes() -> Router<ReaderContext> {
        let router = Router(context: ReaderContext.self)
        router.middlewares.add(DefenceHeadersMiddleware())
        router.middlewares.add(AnsweringMiddleware())
        router.middlewares.add(JSONErrorMiddleware())
        router.middlewares.add(HostGuardMiddleware(names: names))
        if let token { router.middlewares.add(TokenMiddleware(token: token)) }
        router.middlewares.add(WriteGuardMiddleware())
        if library.database is any TeamStore { router.middlewares.add(AudienceMiddleware()) }
        addLogin(to: router)
        addAPI(to: router)
        addPages(to: router)
        return router
    }

    /// How long requests in flight may take to finish once the server is asked to stop.
    static let shutdownGrace: Duration = .seconds(5)

    /// Serves on `host:port` until SIGINT or SIGTERM, then lets requests in flight finish
    /// (for `shutdownGrace` at most).
    /// `ready` gets the port bound (the one asked for, or the system's choice for 0).
    public func run(ready: @escaping @Sendable (Int) -> Void) async throws {
        let host = settings.host
        let port = settings.port
        var logger = Logger(label: "margin.serve")
        logger.logLevel = .warning
        raiseDescriptorLimit()
        let names = self.names
        let app = Application(
            router: router(),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [ConnectionWatch()], idleTimeout: Self.idleTimeout)),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                names.bound(to: bound)
                ready(bound)
            },
            logger: logger)
        // SIGINT or SIGTERM: renders under way are killed at once (they could take minutes),
        // then the requests in flight finish.
        let services = ServiceGroup(
            configuration: .init(
                services: [.init(service: app), .init(service: RenderReaper())],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await services.run()
    }

    private func addLogin(to router: Router<ReaderContext>) {
        router.get("/login") { request, _ -> Response in
            guard let token, let given = request.query.get("token"), sameSecret(given, token) else {
                throw HTTPError(.unauthorized, message: "a wrong or missing token")
            }
            var headers = HTTPFields()
            headers[.location] = "/"
            headers[.setCookie] = "\(TokenMiddleware.cookie)=\(given); Path=/; HttpOnly; SameSite=Strict"
            return Response(status: .seeOther, headers: headers)
        }
    }
}

/// Every request must carry the token: `Authorization: Bearer TOKEN`, or the cookie set by
/// `/login?token=TOKEN`. Anything else is a 401 with nothing done.
struct TokenMiddleware: RouterMiddleware {
    typealias Context = ReaderContext
    static let cookie = "margin_token"
    let token: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if request.uri.path == "/login" { return try await next(request, context) }
        // Authentication schemes are case-insensitive (RFC 9110 §11.1).
        let bearer = request.headers[.authorization].flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return parts[1].trimmingCharacters(in: .whitespaces)
        }
        let cookie = request.cookies[Self.cookie]?.value
        guard let given = bearer ?? cookie, sameSecret(given, token) else {
            throw HTTPError(
                .unauthorized,
                message: "this library needs its token: open /login?token=… or send Authorization: Bearer …")
        }
        return try await next(request, context)
    }
}

/// Kills the renders under way when the server is asked to stop, and stops the process if the
/// requests in flight haven't finished within `ReaderServer.shutdownGrace` (one waiting for a
/// database that went away, say): asked to stop, it stops within seconds.
struct RenderReaper: Service {
    func run() async throws {
        try? await gracefulShutdown()
        IsolatedRender.stopAll()
        Task.detached {
            try? await Task.sleep(for: ReaderServer.shutdownGrace)
            FileHandle.standardError.write(
                Data(
                    "note: requests unfinished after \(ReaderServer.shutdownGrace.components.seconds) s were dropped\n"
                        .utf8))
            exit(0)
        }
    }
}

/// Raises this process's limit of open descriptors to its hard limit, and keeps connections
/// below it (`ConnectionTable`): connections that never finish their headers are closed after
/// `idleTimeout`, or at once when a new client needs their descriptor.
private func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
    ConnectionTable.shared.setCapacity(descriptors: Int(min(limit.rlim_cur, rlim_t(Int32.max))))
}

/// Compares two secrets in time that depends on their length only.
func sameSecret(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

/// Whose annotations a team library's request reads: `?all-users=1` the team's shared ones
/// too, `?all-users=0` the user's own; without it, a page a person reads shows the team's shared
/// ones, and the API answers as the server was started (`--all-users` or not), as the CLI does.
struct AudienceMiddleware: RouterMiddleware {
    typealias Context = ReaderContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        let page = !(path == "/api" || path.hasPrefix("/api/") || path.hasPrefix("/static/") || path == "/login")
        let chosen: Audience?
        switch request.query["all-users"].map({ String($0).lowercased() }) {
        case "1", "true", "yes", "": chosen = .sharedToo
        case "0", "false", "no": chosen = .mine
        case nil: chosen = page ? .sharedToo : nil
        case let other?:
            throw HTTPError(.badRequest, message: "all-users is 1 or 0, not '\(other)'")
        }
        guard let chosen else { return try await next(request, context) }
        return try await Audience.$chosen.withValue(chosen) { try await next(request, context) }
    }
}

/// Any error becomes `{"error": "…"}` with a fitting status: 400 for bad input, 401 for a
/// missing token, 404 for what isn't there, 409 for a conflict, 413 for a body too large.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = ReaderContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let (status, message) = Self.describe(error)
            // The pages a person reads get a page; the API and scripts get JSON.
            let path = request.uri.path
            let api = path == "/api" || path.hasPrefix("/api/") || path == "/login"
            return api
                ? try jsonResponse(["error": message], status: status) : errorPage(status: status, message: message)
        }
    }

    static func describe(_ error: any Error) -> (HTTPResponse.Status, String) {
        switch error {
        case let error as HTTPError:
            let message =
                error.body
                ?? (error.status == .notFound ? "no such page or endpoint" : error.status.reasonPhrase.lowercased())
            return (error.status, message)
        case let error as MarginError:
            if case .passwordNotStored(_, let book) = error {
                return (
                    .unprocessableContent,
                    error.localizedDescription + "; 'margin edit \(book) --password -' stores it"
                )
            }
            return (status(of: error), error.localizedDescription)
        case let error as DecodingError:
            return (.badRequest, "malformed JSON: \(decodingProblem(error))")
        case is NIOTooManyBytesError:
            return (.contentTooLarge, "the request's body is too large")
        case is CancellationError:
            return (.serviceUnavailable, "the request was stopped (its client went away, or the server is stopping)")
        case let error as StoreError:
            if case .unreachable = error { return (.serviceUnavailable, error.localizedDescription) }
            return (.internalServerError, error.localizedDescription)
        case let error as PDFError:
            // What the PDF can't give is the book's state, not the server's failure: said as
            // the CLI says it, with what to do.
            let message = error.localizedDescription
            switch error {
            case .passwordRequired, .wrongPassword:
                return (.unprocessableContent, message + "; 'margin edit BOOK --password -' stores its password")
            case .pageOutOfRange: return (.notFound, message)
            case .unreadable, .pageUnreadable: return (.unprocessableContent, message)
            case .libraryMissing: return (.serviceUnavailable, message)
            case .renderFailed, .saveFailed: return (.internalServerError, message)
            }
        default:
            return (.internalServerError, error.localizedDescription)
        }
    }

    static func status(of error: MarginError) -> HTTPResponse.Status {
        switch error {
        case .bookNotFound, .annotationNotFound, .pageOutOfRange, .fileNotCached, .notCached, .emptyLibrary:
            return .notFound
        case .ambiguousBook, .alreadyHighlighted, .fileExists:
            return .conflict
        case .invalidArgument, .emptyQuery, .invalidBackup:
            return .badRequest
        case .notYours, .annotatedByOthers:
            return .forbidden
        case .popplerLimit:
            return .unprocessableContent
        case .timeLimit:
            return .serviceUnavailable
        default:
            return .internalServerError
        }
    }

    private static func decodingProblem(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): return "'\(key.stringValue)' is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "'\(path)' has the wrong type"
        case .dataCorrupted(let context): return context.debugDescription
        @unknown default: return "not the expected shape"
        }
    }
}

/// The reader's router, answering HEAD wherever it answers GET (RFC 9110): the GET's status
/// and headers, without its body.
public struct ReaderRouter: HTTPResponderBuilder {
    let router: Router<ReaderContext>

    // A concrete type, not `some HTTPResponder<ReaderContext>`: Swift 6.3.1's IRGen crashes on
    // the opaque one in a release build with mangled-name accessors off (build-release.sh).
    public func buildResponder() -> HeadResponder {
        HeadResponder(inner: router.buildResponder())
    }
}

public struct HeadResponder: HTTPResponder {
    let inner: RouterResponder<ReaderContext>

    public typealias Context = ReaderContext

    public func respond(to request: Request, context: ReaderContext) async throws -> Response {
        guard request.method == .head else { return try await inner.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        let response = try await inner.respond(to: Request(head: head, body: request.body), context: context)
        var headers = response.headers
        if let length = response.body.contentLength { headers[.contentLength] = String(length) }
        return Response(status: response.status, headers: headers, body: .init())
    }
}

/// An error as a page of the reader (for the routes a person reads).
func errorPage(status: HTTPResponse.Status, message: String) -> Response {
    let document = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(status.code) \(html(status.reasonPhrase)) — Margin</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/static/reader.css">
        </head><body><header class="bar"><h1><a href="/">Margin</a></h1></header>
        <main class="error-page"><h2>\(status.code) \(html(status.reasonPhrase))</h2>
        <p class="error">\(html(message))</p><p><a href="/">Back to the library</a></p></main></body></html>
        """
    var headers = HTTPFields()
    headers[.contentType] = "text/html; charset=utf-8"
    headers[.cacheControl] = "no-store"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: document)))
}

/// The CLI's JSON (keys sorted, slashes plain) as a response.
func jsonResponse<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
    jsonResponse(bytes: try ViewJSON.data(value, pretty: false), status: status)
}

/// JSON written already (see `PrettyJSON`) as a response.
func jsonResponse<Bytes: Sequence<UInt8>>(bytes: Bytes, status: HTTPResponse.Status = .ok) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.cacheControl] = "no-store"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}

/// Bytes as a response of `type`.
func bytesResponse(_ data: Data, type: String, headers extra: HTTPFields = [:]) -> Response {
    var headers = extra
    headers[.contentType] = type
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
