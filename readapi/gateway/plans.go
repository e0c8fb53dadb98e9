package gateway

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain/account"
)

// plans answers GET /v1/plans (public): the plan catalog, cheapest first.
func plans(c *gin.Context) {
	data := []gin.H{}
	for _, o := range account.Catalog() {
		data = append(data, gin.H{
			"object": "plan", "id": o.Plan, "name": o.Title,
			"monthly_price_usd": o.MonthlyPrice.USD(), "monthly_price_micro_usd": int64(o.MonthlyPrice),
			"limits": o.Limits, "self_serve": o.SelfServe,
			"max_active_keys": gin.H{
				string(account.Answer): account.Answer.MaxActiveKeys(), string(account.Gateway): account.Gateway.MaxActiveKeys(),
				string(account.Records): account.Records.MaxActiveKeys(),
			},
		})
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, gin.H{"object": "list", "data": data})
}
