// Package feedback holds FeedbackSubmitted: a caller's rating of one of its
// own earlier completions (named by its audit hash). The tier-quality read
// model sums ratings per tier and difficulty band, and the router blends
// them into its predictions (routing.Feedback).
//
// Values are plain data, safe to share once built.
package feedback
