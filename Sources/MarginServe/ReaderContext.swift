import Foundation
import Hummingbird
import MarginKit
import NIOCore

/// A request's context: Hummingbird's, and the connection it came on, so that work done for it
/// (a page render, a search) stops when that connection closes.
public struct ReaderContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection; in a router served in process, a test channel without a watch.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// A stop that fires when the client goes away (nil where the connection isn't watched).
    /// Found in `ConnectionTable`, not in the channel's pipeline: asking the pipeline is a hop to
    /// the connection's event loop and back, two thread switches a request.
    func clientGone() -> StopSignal? {
        ConnectionTable.shared.watch(of: channel)?.gone
    }
}

/// Sees a connection end (closed, or its client done sending) and says so to whoever waits on
/// it: a render or search for a client that went away is stopped, not finished for nobody. It
/// also keeps the connection in `ConnectionTable`, which sheds connections that never sent a
/// request when descriptors run short.
final class ConnectionWatch: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    let gone = StopSignal()
    private let lock = NSLock()
    private var channel: (any Channel)?
    private var spoke = false
    let opened = DispatchTime.now().uptimeNanoseconds

    /// Whether a whole request head has come (what reaches this handler is decoded HTTP).
    var hasSpoken: Bool { lock.withLock { spoke } }

    func handlerAdded(context: ChannelHandlerContext) {
        lock.withLock { channel = context.channel }
        for victim in ConnectionTable.shared.opened(self, on: context.channel) { victim.close() }
    }

    func close() { lock.withLock { channel }?.close(promise: nil) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lock.withLock { spoke = true }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        ConnectionTable.shared.closed(context.channel)
        gone.stop()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { gone.stop() }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Pages that went over the render limits, remembered so that asking again (any web page can,
/// with `<img>`) answers at once instead of drawing for the limit again. A failure at one
/// resolution answers for that and every higher one.
final class RenderFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var failed = [String: (dpi: Double, message: String)]()

    func remembered(_ key: String, dpi: Double) -> String? {
        lock.withLock { failed[key].flatMap { dpi >= $0.dpi ? $0.message : nil } }
    }

    func remember(_ key: String, dpi: Double, _ message: String) {
        lock.withLock {
            if let known = failed[key], known.dpi <= dpi { return }
            if failed.count > 10_000 { failed.removeAll() }
            failed[key] = (dpi, message)
        }
    }
}

/// The open connections. Past `capacity` (the descriptors this process may open, less a
/// reserve for files, render children and the database), the oldest connections that have not
/// sent a whole request are closed, so that a new client is served at once however many
/// connections sit open without a word.
final class ConnectionTable: @unchecked Sendable {
    static let shared = ConnectionTable()
    private let lock = NSLock()
    /// By their channel (a channel is removed as it closes, before it can be freed and its
    /// identifier reused).
    private var open = [ObjectIdentifier: ConnectionWatch]()
    private var capacity = Int.max

    /// Descriptors kept for everything but connections.
    static let reserve = 64

    func setCapacity(descriptors: Int) { lock.withLock { capacity = max(16, descriptors - Self.reserve) } }

    /// Takes in a new connection: the connections to close to make room for it.
    func opened(_ watch: ConnectionWatch, on channel: any Channel) -> [ConnectionWatch] {
        lock.withLock {
            open[ObjectIdentifier(channel)] = watch
            let excess = open.count - capacity
            guard excess > 0 else { return [] }
            let silent = open.filter { $0.value !== watch && !$0.value.hasSpoken }.sorted {
                $0.value.opened < $1.value.opened
            }
            let victims = silent.prefix(excess)
            for victim in victims { open[victim.key] = nil }
            return victims.map(\.value)
        }
    }

    func closed(_ channel: any Channel) { lock.withLock { _ = open.removeValue(forKey: ObjectIdentifier(channel)) } }

    /// The watch of an open connection.
    func watch(of channel: any Channel) -> ConnectionWatch? { lock.withLock { open[ObjectIdentifier(channel)] } }
}
