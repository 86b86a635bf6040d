import MarginKit
import NIOCore
import NIOEmbedded
import Testing

@testable import MarginServe

/// A request finds its connection's watch (which stops its render or search when the client
/// leaves) in `ConnectionTable`, without a hop to the connection's event loop.
@Suite struct ConnectionWatchTests {
    @Test func aConnectionsWatchIsFoundByItsChannelUntilItCloses() throws {
        let channel = EmbeddedChannel()
        let other = EmbeddedChannel()
        let watch = ConnectionWatch()
        try channel.pipeline.syncOperations.addHandler(watch)
        try other.pipeline.syncOperations.addHandler(ConnectionWatch())
        let found = try #require(ConnectionTable.shared.watch(of: channel))
        #expect(found === watch)
        #expect(ConnectionTable.shared.watch(of: other) !== watch)
        #expect(!watch.gone.isStopped)
        _ = try channel.finish()
        #expect(watch.gone.isStopped, "the client left: its work stops")
        #expect(ConnectionTable.shared.watch(of: channel) == nil, "a closed connection is out of the table")
        #expect(ConnectionTable.shared.watch(of: other) != nil)
        _ = try other.finish()
        #expect(ConnectionTable.shared.watch(of: other) == nil)
    }
}
