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
    func clientGone() async -> StopSignal? {
        guard let watch = try? await channel.pipeline.handler(type: ConnectionWatch.self).get() else { return nil }
        return watch.gone
    }
}

/// Sees a connection end (closed, or its client done sending) and says so to whoever waits on
/// it: a render or search for a client that went away is stopped, not finished for nobody.
final class ConnectionWatch: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    let gone = StopSignal()

    func channelInactive(context: ChannelHandlerContext) {
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
