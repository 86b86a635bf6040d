import Foundation

extension Array where Element: Sendable {
    /// `transform` on every element, at most `width` at a time, results in the elements' order.
    /// `finished` is told after each element (how many are done). The first error cancels
    /// the rest and is thrown.
    public func concurrentMap<T: Sendable>(
        width: Int, finished: (@Sendable (Int) -> Void)? = nil,
        _ transform: @escaping @Sendable (Element) async throws -> T
    ) async rethrows -> [T] {
        var results = [T?](repeating: nil, count: count)
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var next = 0
            var done = 0
            func launch() {
                guard next < count else { return }
                let index = next
                let element = self[index]
                next += 1
                group.addTask { (index, try await transform(element)) }
            }
            for _ in 0..<Swift.max(1, width) { launch() }
            while let (index, result) = try await group.next() {
                results[index] = result
                done += 1
                finished?(done)
                launch()
            }
        }
        return results.compactMap { $0 }
    }
}
