package main

import (
	"github.com/spf13/cobra"
)

func (a *cli) migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded database migrations and set up missing read models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := a.cfg.logger()
			s, err := openSystem(cmd.Context(), a.cfg, log, openOptions{setup: true})
			if err != nil {
				return err
			}
			defer s.Close()
			log.Info("database schema and read models are up to date")
			return nil
		},
	}
}
