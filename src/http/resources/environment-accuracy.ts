// The accuracy of an environment's threshold on the wire (domain/accuracy/environment-accuracy.ts).
import { Nullable, Type } from '../schema.js'

const EstimatedRate = (description?: string) =>
  Type.Object(
    {
      rate: Type.Number(),
      low: Type.Number({ description: '95 % interval, lower bound' }),
      high: Type.Number({ description: '95 % interval, upper bound' }),
    },
    { description },
  )

export const EnvironmentAccuracySchema = Type.Object(
  {
    environment_id: Type.String({ format: 'uuid' }),
    match_threshold: Type.Number({ description: 'The threshold identify uses now' }),
    target_fpir: Nullable(Type.Number()),
    min_match_threshold: Type.Number(),
    status: Type.Union([Type.Literal('fixed'), Type.Literal('pending'), Type.Literal('calibrated')], {
      description:
        'fixed: no target FPIR; pending: no calibration for the current settings yet (match_threshold serves); calibrated: match_threshold was derived from the target',
    }),
    gallery_size: Type.Integer({ description: 'N: reference rows in the gallery now' }),
    estimated_fpir: Nullable(EstimatedRate("FPIR at match_threshold at the current N (the calibration's estimate carried to N)")),
    recalibrates_at: Nullable(
      Type.Object({ at_most: Type.Integer(), at_least: Type.Integer() }, { description: 'Gallery sizes at which the next calibration runs' }),
    ),
    calibration: Nullable(
      Type.Object({
        threshold: Type.Number(),
        derived_threshold: Type.Number({ description: 'The threshold for the target before the floor' }),
        floor_applied: Type.Boolean(),
        method: Type.Union([Type.Literal('empirical'), Type.Literal('extreme_value')], {
          description: "empirical: counted in the sample; extreme_value: from an exponential fit of the sample's tail (peaks over a threshold)",
        }),
        gallery_size: Type.Integer({ description: 'N when computed' }),
        non_mated_samples: Type.Integer(),
        exceedances: Type.Integer({ description: 'Samples at or above the threshold' }),
        estimated_fpir: EstimatedRate("FPIR at the threshold at the calibration's N"),
        tail: Nullable(
          Type.Object(
            {
              start: Type.Number({ description: 'The score the tail starts at' }),
              scale: Type.Number({ description: 'Mean excess over start' }),
              samples: Type.Integer({ description: 'Sample scores above start' }),
            },
            { description: 'extreme_value: FPIR(T) = samples / non_mated_samples · exp(−(T − start) / scale)' },
          ),
        ),
        target_fpir: Type.Number(),
        min_match_threshold: Type.Number(),
        computed_at: Type.String({ format: 'date-time' }),
        mated_samples: Nullable(Type.Integer({ description: 'Sampled identify captures searched for their own member (null: computed before this was kept)' })),
        fnir: Nullable(
          EstimatedRate(
            "FNIR at the threshold: share of mated samples whose member was not top-1 at or above it. The identify capture is from the enrollment's session, so this is a same-session estimate",
          ),
        ),
        det: Type.Array(Type.Object({ threshold: Type.Number(), fpir: Type.Number(), fnir: Type.Number() }), {
          description:
            'The DET curve over the calibration sample at its gallery size, by ascending threshold (at most 64 points; the threshold in use is one); empty before it was kept',
        }),
      }),
    ),
  },
  { $id: 'EnvironmentAccuracy' },
)
