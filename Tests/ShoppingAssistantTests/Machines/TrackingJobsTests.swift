import Foundation
import Testing

@testable import ShoppingAssistant

/// The jobs of one `.track` action: never empty, in queue order, one job without an array.
@Suite struct TrackingJobsTests {
    private static let user = GravityUser(uid: "uid-1")
    private static let jobs: [TrackingJob] = (1...3).map { .url(TrackingURL("https://t.example/\($0)"), user: user) }

    @Test func noJobsMakeNoBatch() {
        #expect(TrackingJobs([TrackingJob]()) == nil)
    }

    @Test func oneJobEqualsTheSameJobGivenAsAList() throws {
        let one = TrackingJobs(Self.jobs[0])
        let listed = try #require(TrackingJobs(Self.jobs.prefix(1)))
        #expect(Array(one) == [Self.jobs[0]])
        #expect(one == listed)
        #expect(one == [Self.jobs[0]])
        #expect(one.hashValue == listed.hashValue)
    }

    @Test func aBatchKeepsItsOrderAndHeldJobsGoFirst() throws {
        let batch = try #require(TrackingJobs(Self.jobs))
        #expect(Array(batch) == Self.jobs)
        #expect(batch != [Self.jobs[2], Self.jobs[1], Self.jobs[0]])
        let last = TrackingJobs(Self.jobs[2])
        #expect(Array(last.after(Array(Self.jobs.prefix(2)))) == Self.jobs)
        #expect(last.after([]) == last)
    }
}
